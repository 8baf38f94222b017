check --zone cli.zone --receiver mx.example.org --format exim --json --ip 192.0.2.10 --sender a@b.example --helo mail.example
