tree --zone ../../data/demo.zone example.org
