# The hash of the package as published (#!/bin/sh, exit 1); the mirror holds another.
provider "registry.terraform.io/hashicorp/null" {
  version     = "3.2.0"
  constraints = "3.2.0"
  hashes = [
    "h1:G0xIjL1jTLd5EHfC9oSHhr5wzWs8HFkZl2ml67F4Ph4=",
  ]
}
