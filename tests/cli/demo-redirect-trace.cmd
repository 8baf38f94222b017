check --zone ../../data/demo.zone --receiver mx.receiver.example --trace --ip 192.0.2.20 --sender grace@alias.example.org --helo mx2.example.com
