check --zone cli.zone --receiver mx.example.org --ip 192.0.2.10 --sender frank@maybe.example --helo mail.example
