tree --zone tree.zone chain.example --record 'v=spf1 -all'
