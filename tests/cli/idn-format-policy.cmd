check --zone idn.zone --receiver mx.example.org --ip 192.0.2.1 --sender 'user@münchen.example' --helo h.example --format policy
