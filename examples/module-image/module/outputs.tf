output "machine_names" {
  value = [for m in terraform_data.machine : m.output.name]
}
