resource "terraform_data" "cluster" {
  input            = { name = var.cluster_name, generation = 1 }
  triggers_replace = "v2"
}

resource "terraform_data" "node" {
  for_each = toset(["a","b"])
  input    = "node-${each.key}"
}

resource "terraform_data" "replica" {
  count = 3
  input = "replica-${count.index}"
}

resource "terraform_data" "network" {
  input = "10.0.0.0/16"
}

resource "terraform_data" "credentials" {
  input = var.admin_token
}

module "addon" {
  source = "./modules/addon"
}
