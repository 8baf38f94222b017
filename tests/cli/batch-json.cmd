check --zone cli.zone --receiver mx.example.org --json --batch queries.txt
