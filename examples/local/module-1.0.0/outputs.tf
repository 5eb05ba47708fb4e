output "cluster_id" {
  value = terraform_data.cluster.id
}

output "node_ids" {
  value = { for key, node in terraform_data.node : key => node.id }
}

output "admin_token" {
  value     = var.admin_token
  sensitive = true
}
