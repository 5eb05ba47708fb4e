# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "registry.terraform.io/hashicorp/null" {
  version     = "3.2.0"
  constraints = "3.2.0"
  hashes = [
    "h1:RArYhuAfyp9nidTobXvKfwx5ul0B35slKPS0TtsRdO0=",
  ]
}
