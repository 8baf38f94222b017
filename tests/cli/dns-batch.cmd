check --dns 127.0.0.1:$PORT --receiver mx.example.org --batch queries.txt
