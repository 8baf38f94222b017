check --zone ../../data/demo.zone --receiver mx.receiver.example --ip 192.0.2.78 --sender orders@shop.example.net --helo mx.shop.example.net
