check --zone cli.zone --receiver mx.example.org --format exim --ip 192.0.2.21 --sender eve@soft.example --helo mail.example
