lint --zone ../../data/demo.zone example.org
