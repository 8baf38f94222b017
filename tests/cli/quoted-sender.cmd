check --zone cli.zone --receiver mx.example.org --ip 192.0.2.11 --sender '"john (doe)\\"@mx-only.example' --helo mail.example
