check --zone cli.zone --receiver mx.example.org --identity helo --ip 192.0.2.40 --helo gw.example
