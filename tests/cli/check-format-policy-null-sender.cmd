check --zone cli.zone --receiver mx.example.org --format policy --ip 192.0.2.30 --sender '' --helo gw.example
