check --zone cli.zone --receiver mx.example.org --trace --ip 192.0.2.11 --sender alice@mx-only.example --helo mail.example
