check --zone cli.zone --receiver mx.example.org --batch queries.txt --trace
