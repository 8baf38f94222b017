tree --record 'v=spf1 mx include:_spf.provider.example -all' --domain hosts.example --zone tree.zone
