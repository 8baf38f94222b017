check --zone cli.zone --receiver mx.example.org --format policy --ip 192.0.2.10 --sender alice@mx-only.example --helo gw.example
