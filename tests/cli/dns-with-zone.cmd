check --zone cli.zone --receiver mx.example.org --dns 127.0.0.1:5353 --ip 192.0.2.10 --sender a@mx-only.example --helo mail.example
