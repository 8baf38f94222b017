check --zone cli.zone --receiver mx.example.org --format exim --ip 192.0.2.10 --sender alice@explained.example --helo mail.example
