check --zone cli.zone --receiver mx.example.org --ip 192.0.2.10 --sender "a@$(printf '%065535d' 0)" --helo mail.example
