lint --zone ../../data/demo.zone --record 'v=spf1 -all' example.com
