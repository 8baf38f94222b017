check --zone cli.zone --receiver mx.example.org --ip 192.0.2.10 --sender a@plain.example --helo "$(printf '%065537d' 0)"
