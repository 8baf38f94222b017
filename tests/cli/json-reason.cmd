check --zone cli.zone --receiver mx.example.org --json --ip 192.0.2.99 --sender vic@void.example --helo mail.example
