lint --record 'v=spf1 include:_spf.münchen.example a:mail.bücher.example/24 -all' --domain münchen.example
