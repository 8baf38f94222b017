check --zone cli.zone --receiver mx.example.org --format policy --ip 192.0.2.10 --sender grace@plain.example --helo mail.example
