package main
import (
 _ "github.com/valyala/fasthttp"
 _ "go.etcd.io/bbolt"
 _ "github.com/miekg/dns"
 _ "github.com/hashicorp/golang-lru/v2"
 _ "github.com/BurntSushi/toml"
 _ "golang.org/x/sync/singleflight"
)
