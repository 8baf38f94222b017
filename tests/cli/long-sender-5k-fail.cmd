check --zone cli.zone --receiver mx.example.org --ip 192.0.2.10 --sender "$(printf '%05000d' 0)@nomail.example" --helo mail.example
