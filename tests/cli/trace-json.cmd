check --zone cli.zone --receiver mx.example.org --trace --json --ip 192.0.2.20 --sender eve@soft.example --helo mail.example
