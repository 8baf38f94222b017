check --zone idn.zone --receiver mx.example.org --ip 192.0.2.9 --sender 'jürgen@münchen.example' --helo h.example --trace
