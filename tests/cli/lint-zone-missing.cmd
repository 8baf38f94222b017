lint --zone nosuch.zone example.com
