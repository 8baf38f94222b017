lint --zone ../../data/demo.zone --domain example.com --record '"v=spf1 mx " "ip4:192.0.2.1" "-all default=softfail"'
