check --zone cli.zone --receiver mx.example.org --trace --ip 192.0.2.10 --sender oscar@binary.example --helo mail.example
