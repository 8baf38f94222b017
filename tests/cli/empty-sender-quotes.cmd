check --zone cli.zone --receiver mx.example.org --ip 192.0.2.41 --sender '' --helo gw.example
