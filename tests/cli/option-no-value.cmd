check --zone cli.zone --receiver mx.example.org --sender alice@mx-only.example --helo mail.example --ip
