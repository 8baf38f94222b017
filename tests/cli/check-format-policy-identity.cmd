check --zone cli.zone --receiver mx.example.org --format policy --identity helo --ip 192.0.2.10 --helo gw.example
