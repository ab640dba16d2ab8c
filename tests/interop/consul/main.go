package main

import (
	"fmt"

	"github.com/hashicorp/consul/api"
	"github.com/prometheus/prometheus/discovery/consul"
)

func main() {
	fmt.Println(api.HealthPassing, consul.DefaultSDConfig)
}
