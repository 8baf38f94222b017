lint --zone ../../data/demo.zone --record 'v=spf1 ipv4:192.0.2.1, ptr +all'
