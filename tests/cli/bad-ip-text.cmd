check --zone cli.zone --receiver mx.example.org --ip mail.example --sender alice@mx-only.example --helo mail.example
