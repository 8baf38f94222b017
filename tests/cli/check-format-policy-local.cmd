check --zone cli.zone --receiver mx.example.org --format policy --ip 127.0.0.1 --sender bob@nomail.example --helo mail.example
