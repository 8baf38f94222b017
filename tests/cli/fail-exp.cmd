check --zone cli.zone --receiver mx.example.org --ip 192.0.2.99 --sender carol@explained.example --helo mail.example
