# An example CAPTF module built only from terraform_data (no provider download): a "cluster"
# with a control plane endpoint, a few nodes and a secret token.
variable "cluster_name" {
  type = string
}

variable "node_count" {
  type    = number
  default = 2
}

variable "admin_token" {
  type      = string
  sensitive = true
}

resource "terraform_data" "network" {
  input = "${var.cluster_name}-net"
}

resource "terraform_data" "control_plane" {
  input            = { name = var.cluster_name, network = terraform_data.network.output }
  triggers_replace = [var.cluster_name]
}

resource "terraform_data" "node" {
  count = var.node_count
  input = "${var.cluster_name}-node-${count.index}"
}

output "endpoint" {
  value = "https://${var.cluster_name}.example.internal:6443"
}

output "nodes" {
  value = terraform_data.node[*].output
}

output "kubeconfig_token" {
  value     = var.admin_token
  sensitive = true
}
