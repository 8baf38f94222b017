check --zone cli.zone --receiver mx.example.org --batch -
