check --zone bad-ttl.zone --ip 192.0.2.10 --sender a@example.example --helo mail.example
