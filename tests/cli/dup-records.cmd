check --zone dup.zone --receiver mx.example.org --ip 192.0.2.10 --sender alice@dup.example --helo mail.example
