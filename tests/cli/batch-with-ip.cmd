check --zone cli.zone --receiver mx.example.org --batch queries.txt --ip 192.0.2.10
