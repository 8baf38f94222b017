check --zone no-such.zone --ip 192.0.2.10 --sender a@mx-only.example --helo mail.example
