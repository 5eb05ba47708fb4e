# A module whose provider the mirror holds, but changed: the lock file (made from the package as
# published) does not vouch for the package in the mirror, so `contract check` must fail (providers,
# exit 4) without installing or starting it.
terraform {
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "3.2.0"
    }
  }
}

resource "null_resource" "x" {}
