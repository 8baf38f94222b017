check --zone cli.zone --receiver mx.example.org --format policy --batch batch.in
