# A module whose provider the image's mirror lacks: `contract check` must fail at init with the
# mirror named in the fix. Its lock file was made against a local mirror holding a stand-in
# hashicorp/null 3.2.0, so the lock is in order and only the mirror lacks the provider.
terraform {
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "3.2.0"
    }
  }
}

resource "null_resource" "x" {}
