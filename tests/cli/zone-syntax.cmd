check --zone bad.zone --ip 192.0.2.10 --sender a@mx-only.example --helo mail.example
